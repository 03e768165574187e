package api_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"path/filepath"

	"github.com/flowgate/flowgate/host/api"
)

// A command talks to the gateway when one runs, and otherwise opens the
// store itself.
func ExampleDialRemote() {
	home := "/home/me/.flowgate"
	var c api.Client
	remote, err := api.DialRemote(filepath.Join(home, "gateway.sock"))
	switch {
	case err == nil:
		c = remote
	case errors.Is(err, api.ErrNoGateway):
		if c, err = api.OpenLocal(home, "flowgate tasks list"); err != nil {
			log.Fatal(err)
		}
	default:
		log.Fatal(err)
	}
	defer c.Close()
	st, err := c.Status(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("gateway running:", st.Running)
}
