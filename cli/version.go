package cli

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print flowgate's module version, commit and Go version",
		Long: `Print the module version flowgate was built from ("v1.2.3" from go install
...@v1.2.3, "(devel)" from a checkout), the VCS commit and whether the tree
had local changes, and the Go version and platform it was built with.`,
		Args: args(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			bi, _ := debug.ReadBuildInfo()
			fmt.Fprint(e.stdout, versionText(bi, runtime.GOOS+"/"+runtime.GOARCH))
			return nil
		},
	}
}

// versionText renders what "flowgate version" prints from the binary's
// build information; nil (a binary built without module support) prints
// "unknown" for what it cannot tell.
func versionText(bi *debug.BuildInfo, platform string) string {
	version, commit, goVersion := "unknown", "unknown", runtime.Version()
	var when, modified string
	if bi != nil {
		goVersion = bi.GoVersion
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = "with local changes"
				}
			}
		}
	}
	if m := pseudoRev.FindStringSubmatch(version); commit == "unknown" && m != nil {
		commit = m[1] // go install ...@latest builds from a module zip, without VCS stamps
	}
	var b strings.Builder
	fmt.Fprintf(&b, "flowgate %s\n", version)
	detail := strings.Join(nonEmpty(when, modified), ", ")
	if detail != "" {
		detail = " (" + detail + ")"
	}
	fmt.Fprintf(&b, "commit   %s%s\n", commit, detail)
	fmt.Fprintf(&b, "go       %s %s\n", goVersion, platform)
	return b.String()
}

// pseudoRev finds the commit in a pseudo-version such as
// v0.0.0-20261201034500-0123456789ab.
var pseudoRev = regexp.MustCompile(`[-.]\d{14}-([0-9a-f]{12})(\+incompatible)?$`)

func nonEmpty(s ...string) []string {
	var out []string
	for _, v := range s {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}
