package cli

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/flowgate/flowgate/host/api/apitype"
)

// heldEnv fills in the values the gateway holds in memory for the task:
// the caller's environment with --inherit-env, but for its FLOWGATE_*
// variables (flowgate's own settings and credentials, such as
// FLOWGATE_ETCD_PASSWORD, which are the caller's and not the task's), and
// each --secret-env, which the spec names but never holds the value of.
func heldEnv(in *apitype.CreateTaskInput, o runOpts) error {
	held := map[string]string{}
	if o.inheritEnv {
		in.Spec.InheritEnv = true
		for _, kv := range os.Environ() {
			if k, v, ok := strings.Cut(kv, "="); ok && k != "" && !strings.HasPrefix(k, "FLOWGATE_") {
				held[k] = v
			}
		}
	}
	for _, arg := range o.secretEnv {
		name, file, fromFile := strings.Cut(arg, "=")
		if name == "" || strings.ContainsAny(name, "\x00") {
			return usageError{fmt.Errorf("--secret-env %q must be NAME (from the environment) or NAME=@FILE", arg)}
		}
		var value string
		switch {
		case fromFile && strings.HasPrefix(file, "@"):
			b, err := os.ReadFile(file[1:])
			if err != nil {
				return usageError{fmt.Errorf("--secret-env %s: %w", name, err)}
			}
			value = strings.TrimSuffix(string(b), "\n")
		case fromFile:
			return usageError{fmt.Errorf("--secret-env %s: a value on the command line is visible to every user in ps; export %s and pass --secret-env %s, or pass --secret-env %s=@FILE", name, name, name, name)}
		default:
			v, ok := os.LookupEnv(name)
			if !ok {
				return usageError{fmt.Errorf("--secret-env %s: %s is not set in this command's environment; export it, or pass --secret-env %s=@FILE", name, name, name)}
			}
			value = v
		}
		if slices.Contains(in.Spec.SecretEnv, name) {
			return usageError{fmt.Errorf("--secret-env %s is given twice; pass it once", name)}
		}
		if _, ok := in.Spec.Env[name]; ok {
			return usageError{fmt.Errorf("%s is given with both --env and --secret-env; pass it one way", name)}
		}
		in.Spec.SecretEnv = append(in.Spec.SecretEnv, name)
		held[name] = value
	}
	if len(held) > 0 {
		in.HeldEnv = held
	}
	return nil
}
