package shell_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/shell"
)

// A command line with the request on its stdin, stopped with all it
// started if it runs past ten seconds.
func ExampleCommand() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := shell.Command(ctx, "tr a-z A-Z", time.Second)
	cmd.Stdin = strings.NewReader("hello\n")
	out, err := cmd.Output()
	if err != nil {
		fmt.Println("the command failed:", err)
		return
	}
	fmt.Print(string(out))
	// Output: HELLO
}
