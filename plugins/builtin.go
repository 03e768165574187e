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
