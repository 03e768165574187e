package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/flowgate/flowgate/host/plugins"
)

// FileConfig is the gateway's YAML config file. Every field is optional;
// unknown keys are errors.
//
//	limits:
//	  max_running: 8      # tasks running at once; the rest wait, FIFO
//	retention:
//	  tasks: 168h         # how long finished tasks are kept
//	log_level: info       # trace, debug, info, warn, error
//	plugins:              # controller plugins
//	  - name: hello
//	    path: /usr/local/bin/hello-controller
//	    sha256: 9f86…     # optional: checked before every launch
type FileConfig struct {
	Limits struct {
		MaxRunning int `yaml:"max_running"`
	} `yaml:"limits"`
	Retention struct {
		Tasks Duration `yaml:"tasks"`
	} `yaml:"retention"`
	LogLevel string         `yaml:"log_level"`
	Plugins  []plugins.Spec `yaml:"plugins"`
}

// Duration is a YAML duration written as a Go duration string ("90s",
// "168h").
type Duration time.Duration

// UnmarshalYAML parses a duration string, naming the bad value.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (write it like 90s, 15m or 168h)", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// LoadConfig reads and validates a gateway config file. Errors name the
// file, the line and the key.
func LoadConfig(path string) (FileConfig, error) {
	var c FileConfig
	b, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("read gateway config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return c, fmt.Errorf("gateway config %s: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("gateway config %s: %w", path, err)
	}
	return c, nil
}

// Validate names the first key that holds an impossible value.
func (c FileConfig) Validate() error {
	switch {
	case c.Limits.MaxRunning < 0:
		return fmt.Errorf("limits.max_running must be at least 1 (got %d)", c.Limits.MaxRunning)
	case c.Retention.Tasks < 0:
		return fmt.Errorf("retention.tasks must not be negative (got %s)", time.Duration(c.Retention.Tasks))
	}
	switch c.LogLevel {
	case "", "trace", "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("log_level %q is not one of trace, debug, info, warn, error", c.LogLevel)
	}
	seen := map[string]bool{}
	for _, p := range c.Plugins {
		if err := p.Validate(); err != nil {
			return err
		}
		if seen[p.Name] {
			return fmt.Errorf("plugins: %q is named twice", p.Name)
		}
		seen[p.Name] = true
	}
	return nil
}
