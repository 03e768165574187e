package runcenter_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/runcenter"
)

// A run center over a client, behind its guard: with a token configured,
// a request without one gets 401, and one with it gets the flow list.
func Example() {
	home, _ := os.MkdirTemp("", "fgex")
	defer os.RemoveAll(home)
	c, err := api.OpenLocal(home, "example")
	if err != nil {
		panic(err)
	}
	defer c.Close()
	rc, err := runcenter.New(runcenter.Config{Client: c, Home: home, Tokens: []runcenter.Token{{Name: "alice", Token: "s3cret"}}})
	if err != nil {
		panic(err)
	}
	h := rc.Guard(rc)
	for _, auth := range []string{"", "Bearer s3cret"} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Println(rec.Code)
	}
	// Output:
	// 401
	// 200
}
