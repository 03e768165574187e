package flows

import "context"

var commandsListCommand = &Command{
	Name:        "commands.list",
	Description: "List the commands this pipeline can use: {name, description, sideEffects}, and plugin for a plugin's stage, sorted by name",
	SideEffects: []string{},
	Run: func(_ context.Context, call *Call) (StageOutput, error) {
		names := call.Commands.Names()
		out := make([]any, len(names))
		for i, n := range names {
			c := call.Commands[n]
			effects := make([]any, len(c.SideEffects))
			for j, e := range c.SideEffects {
				effects[j] = e
			}
			item := NewObject(4)
			item.Set("name", n)
			item.Set("description", c.Description)
			item.Set("sideEffects", effects)
			if c.Plugin != "" {
				item.Set("plugin", c.Plugin)
			}
			out[i] = item
		}
		return StageOutput{Items: out}, nil
	},
}
