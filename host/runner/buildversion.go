package runner

import (
	"debug/buildinfo"
	"strings"
)

// buildVersion returns the version the Go executable at path was built
// from, as its build information says: the module version (v1.2.3 from
// go install, a pseudo-version or "(devel)" from a checkout), then the
// commit and "+modified" when the build stamped them. It is empty when
// the file holds no build information (not a Go executable).
func buildVersion(path string) string {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return ""
	}
	v := []string{bi.Main.Version}
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision":
			v = append(v, "commit "+s.Value)
		case s.Key == "vcs.modified" && s.Value == "true":
			v = append(v, "+modified")
		}
	}
	return strings.Join(v, " ")
}

// describeVersion is a buildVersion for people.
func describeVersion(v string) string {
	if v == "" {
		return "unknown (no Go build information in the file)"
	}
	return v
}
