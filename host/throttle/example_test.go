package throttle_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/host/throttle"
)

// A loop that writes holds back while writes fail and logs one line for a
// run of identical failures.
func Example() {
	log := &throttle.Log{Logger: hclog.New(&hclog.LoggerOptions{Output: os.Stdout, DisableTime: true})}
	var hold throttle.Backoff
	write := func() error { return errors.New("disk full") }
	for range 3 {
		if hold.Wait() > 0 {
			continue // try again once the hold is over
		}
		if err := write(); err != nil {
			fmt.Println("hold for", hold.Fail())
			log.Error("write failed", "error", err)
		}
	}
	// Output:
	// hold for 250ms
	// [ERROR] write failed: error="disk full"
}
