package cli

import (
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/cli/pluginnew"
)

// newPluginsNewCmd is `flowgate plugins new NAME --lang go|python|ts`: a
// working controller in a new folder, from the example of that language.
func newPluginsNewCmd(e *env) *cobra.Command {
	var lang, dir string
	cmd := &cobra.Command{
		Use:   "new NAME",
		Short: "Write a working controller plugin in Go, Python or TypeScript to a new folder",
		Long: `Writes a controller plugin called NAME to the folder NAME (or --dir),
from the example controller of the language: hello for go, two-step-py
for python, two-step-ts for ts. The folder holds what it needs to build on
its own (a go.mod; the generated gRPC code; the .proto and package-lock.json)
and a README with the steps to build it and check it with
flowgate plugins test ./plugin, which it passes unchanged.`,
		Args: args(1, "the plugin's name (flowgate plugins new NAME --lang go|python|ts)"),
		RunE: func(_ *cobra.Command, a []string) error {
			name := a[0]
			if dir == "" {
				dir = name
			}
			files, err := pluginnew.Write(dir, name, lang, moduleVersion())
			if err != nil {
				return usageError{err}
			}
			fmt.Fprintf(e.stdout, "Wrote %s plugin %s to %s: %s\n", lang, name, dir, strings.Join(files, ", "))
			fmt.Fprintf(e.stdout, "Next: %s\n", nextSteps(dir, lang))
			return nil
		},
	}
	cmd.Flags().StringVar(&lang, "lang", "go", "the plugin's language: "+strings.Join(pluginnew.Langs, ", "))
	cmd.Flags().StringVar(&dir, "dir", "", "the folder to write (default NAME); it must not exist or be empty")
	return cmd
}

// moduleVersion is the flowgate module version of this binary; a new Go
// plugin requires the sdk of the same version (sdk/VERSION is tagged with
// each release). A binary built from a checkout has none and names
// v0.0.0, which the plugin's README replaces with the checkout's sdk.
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && strings.HasPrefix(bi.Main.Version, "v") {
		return bi.Main.Version
	}
	return "v0.0.0"
}

// nextSteps is what to run in the new folder before plugins test.
func nextSteps(dir, lang string) string {
	plugin := filepath.Join(dir, "plugin")
	switch lang {
	case "go":
		return fmt.Sprintf("cd %s && go mod edit -replace %s=/path/to/flowgate/sdk (until the sdk is published) && go mod tidy && go build -o plugin . && flowgate plugins test ./plugin", dir, pluginnew.Module)
	case "ts":
		return fmt.Sprintf("(cd %s && npm ci) && flowgate plugins test %s", dir, plugin)
	default:
		return "flowgate plugins test " + plugin + " (needs python3-grpcio and python3-protobuf)"
	}
}
