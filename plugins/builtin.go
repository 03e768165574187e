package plugins

import (
	"slices"

	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
)

// builtins returns the first-party controllers by name.
func builtins() map[string]func() sdk.Controller {
	return map[string]func() sdk.Controller{
		pipeline.Name: pipeline.New,
	}
}

// Builtin returns a new instance of the first-party controller name.
func Builtin(name string) (sdk.Controller, bool) {
	mk, ok := builtins()[name]
	if !ok {
		return nil, false
	}
	return mk(), true
}

// Names lists the first-party controllers, sorted.
func Names() []string {
	var names []string
	for n := range builtins() {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Controllers returns a new instance of every first-party controller, by
// name: what a gateway runs in its own process (gateway.Config.Controllers)
// when the CLI hosts it for one command.
func Controllers() map[string]sdk.Controller {
	cs := map[string]sdk.Controller{}
	for name, mk := range builtins() {
		cs[name] = mk()
	}
	return cs
}
