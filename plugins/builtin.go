package plugins

import (
	"os"
	"slices"

	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
)

// Controllers returns how to make every first-party controller, by name,
// each with the environment getenv tells (the gateway's FLOWGATE_*
// settings): what every gateway the CLI starts, the daemon included, runs
// in its own process (gateway.Config.Controllers), and what Builtin and
// Names read.
func Controllers() map[string]func(getenv func(string) string) sdk.Controller {
	return map[string]func(getenv func(string) string) sdk.Controller{
		pipeline.Name: pipeline.NewFrom,
	}
}

// Builtin returns a new instance of the first-party controller name.
func Builtin(name string) (sdk.Controller, bool) {
	mk, ok := Controllers()[name]
	if !ok {
		return nil, false
	}
	return mk(os.Getenv), true
}

// Names lists the first-party controllers, sorted.
func Names() []string {
	var names []string
	for n := range Controllers() {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
