package gateway

import (
	"fmt"
	"net/url"
	"regexp"
)

// PipelineConfig is the pipeline: section of the gateway config.
type PipelineConfig struct {
	// SecretEnv lists the gateway's environment variables a model stage
	// may name with --secret-env: the only ones a workflow file can have
	// passed to its task, read when the task starts, never stored. Any
	// other name is refused, so a file cannot read the gateway's
	// variables at will.
	SecretEnv []string `yaml:"secret_env"`
	// LLM gives the model stages' defaults; a stage's --base-url and
	// --model win.
	LLM struct {
		BaseURL string `yaml:"base_url"`
		Model   string `yaml:"model"`
	} `yaml:"llm"`
}

// envName is what a variable secret_env lists must look like: a shell
// variable's name, so no entry can smuggle in a separator or a value.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate names the first entry of the section that cannot work.
func (p PipelineConfig) Validate() error {
	for i, name := range p.SecretEnv {
		if !envName.MatchString(name) {
			return fmt.Errorf("pipeline.secret_env[%d] %q is not a variable name (letters, digits and _, not starting with a digit)", i, name)
		}
	}
	if p.LLM.BaseURL != "" {
		u, err := url.Parse(p.LLM.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("pipeline.llm.base_url %q is not an http or https URL; write it as https://api.openai.com/v1", p.LLM.BaseURL)
		}
	}
	return nil
}
