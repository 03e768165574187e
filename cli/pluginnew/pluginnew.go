// Package pluginnew writes a new controller plugin folder from one of the
// example controllers (examples/controllers), with the plugin's name put
// in where the example's was, and what the folder needs to build alone:
// a go.mod for Go, the generated gRPC code for Python, the .proto and the
// npm lock file for TypeScript.
package pluginnew

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/flowgate/flowgate/examples/controllers"
)

// Langs are the languages a plugin can be started in, in the order help
// text lists them.
var Langs = []string{"go", "python", "ts"}

// GoVersion is the go directive of a new Go plugin's go.mod: the one
// the sdk's go.mod names, since the plugin builds against it.
const GoVersion = "1.26.0"

// Module is the Go module a Go plugin requires: the sdk, a module of its
// own so that a plugin's module graph is the sdk's, not the gateway's.
const Module = "github.com/flowgate/flowgate/sdk"

// template is one language's example and how to rename it.
type template struct {
	example string
	// renames are applied in order to every file; each must change at
	// least one, so an edit to the example that drops one fails loudly.
	renames func(name string) [][2]string
	// extra files the folder needs beyond the example's, by path.
	extra func(name, version string) map[string]string
}

var templates = map[string]template{
	"go": {
		example: "hello",
		renames: func(name string) [][2]string {
			return [][2]string{{`Name: "hello"`, `Name: "` + name + `"`}, {"// Command hello is", "// Command " + name + " is"}}
		},
		extra: func(name, version string) map[string]string {
			return map[string]string{
				"go.mod":    fmt.Sprintf("module %s\n\ngo %s\n\nrequire %s %s\n", name, GoVersion, Module, version),
				"README.md": goReadme(name, version),
			}
		},
	},
	"python": {
		example: "two-step-py",
		renames: func(name string) [][2]string { return [][2]string{{"two-step-py", name}} },
		extra: func(name, _ string) map[string]string {
			return map[string]string{"README.md": pythonReadme(name)}
		},
	},
	"ts": {
		example: "two-step-ts",
		renames: func(name string) [][2]string {
			return [][2]string{{"flowgate-two-step-ts", name}, {"two-step-ts", name}}
		},
		extra: func(name, _ string) map[string]string {
			return map[string]string{"README.md": tsReadme(name)}
		},
	},
}

var validName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)

// Write writes a new plugin called name in lang to dir, which must not
// exist or be empty, and returns the files written, relative to dir.
// version is the sdk module version a Go plugin requires (the sdk is
// tagged sdk/VERSION with each flowgate release VERSION).
func Write(dir, name, lang, version string) ([]string, error) {
	tpl, ok := templates[lang]
	if !ok {
		return nil, fmt.Errorf("no template for language %q: use --lang with one of %s", lang, strings.Join(Langs, ", "))
	}
	if !validName.MatchString(name) {
		return nil, fmt.Errorf("plugin name %q: use lower-case letters, digits, - and _, starting with a letter (it names the Go module or npm package and the plugin)", name)
	}
	if err := emptyDir(dir); err != nil {
		return nil, err
	}
	files, err := render(tpl, name, version)
	if err != nil {
		return nil, err
	}
	var written []string
	for rel, content := range files {
		mode := os.FileMode(0o644)
		if path.Base(rel) == "plugin" {
			mode = 0o755 // the executable the gateway runs
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			return nil, err
		}
		written = append(written, rel)
	}
	sort.Strings(written)
	return written, nil
}

// render returns the new plugin's files by path, from the example with
// the renames applied, plus the language's extra files.
func render(tpl template, name, version string) (map[string]string, error) {
	renames := tpl.renames(name)
	used := make([]bool, len(renames))
	files := map[string]string{}
	root := tpl.example
	err := fs.WalkDir(controllers.Sources, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := controllers.Sources.ReadFile(p)
		if err != nil {
			return err
		}
		s := string(b)
		for i, r := range renames {
			if strings.Contains(s, r[0]) {
				used[i] = true
				s = strings.ReplaceAll(s, r[0], r[1])
			}
		}
		files[strings.TrimPrefix(p, root+"/")] = s
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i, u := range used {
		if !u {
			return nil, fmt.Errorf("template %s: %q is no longer in the example, so the plugin would keep its name; update cli/pluginnew", root, renames[i][0])
		}
	}
	for p, s := range tpl.extra(name, version) {
		files[p] = s
	}
	return files, nil
}

// emptyDir makes sure dir can take the new plugin without overwriting
// anything: it is created if missing, and refused if it holds files.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s is not empty: give a new folder with --dir, or another name", dir)
	}
	return nil
}
