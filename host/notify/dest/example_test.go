package dest_test

import (
	"fmt"

	"github.com/flowgate/flowgate/host/notify/dest"
)

func ExampleRedact() {
	fmt.Println(dest.Redact("smtp://bot:${SMTP_PASSWORD}@mail.example.com:587/?from=bot@example.com&to=ops@example.com"))
	fmt.Println(dest.Redact("https://hooks.example.com/flowgate?token=abc123"))
	fmt.Println(dest.Redact("discord://tokentoken@1234567"))
	// Output:
	// smtp://bot:${SMTP_PASSWORD}@mail.example.com:587/?from=bot@example.com&to=ops@example.com
	// https://hooks.example.com/flowgate?token=***
	// discord://***@1234567
}
