package gateway_test

import (
	"context"
	"fmt"
	"os"

	"github.com/flowgate/flowgate/host/gateway"
)

// A gateway on a fresh home: started, asked for its status in-process,
// and stopped.
func Example() {
	dir, err := os.MkdirTemp("", "fgex")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	g, err := gateway.New(gateway.Config{Home: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	if err := g.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	st, err := g.Client().Status(ctx)
	fmt.Println("running:", st.Running, err)
	fmt.Println("stopped:", g.Stop(ctx))
	// Output:
	// running: true <nil>
	// stopped: <nil>
}
