package shim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// SpecEnv names the entry of Launch's env that carries an attempt's
// spec, as SpecEntry makes it. Launch takes the entry out of the
// environment and writes the spec to the shim's stdin, a pipe: the spec
// never reaches the shim's environment or a file.
const SpecEnv = "FLOWGATE_SHIM_SPEC"

// SpecEntry validates s and returns the environment entry that hands it
// to the shim through Launch.
func SpecEntry(s Spec) (string, error) {
	if err := s.Validate(); err != nil {
		return "", err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encode spec: %w", err)
	}
	return SpecEnv + "=" + string(b), nil
}

// takeSpec removes the SpecEnv entry from env and returns what it
// carries, or nil when there is none.
func takeSpec(env []string) ([]string, []byte) {
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, SpecEnv+"="); ok {
			rest := append(env[:i:i], env[i+1:]...)
			return rest, []byte(v)
		}
	}
	return env, nil
}

// frame is how a spec travels on the pipe: its length in decimal, a
// newline, the JSON. A frame cut short (the gateway died while writing
// it) is told apart from a complete one.
func frame(spec []byte) []byte {
	return append([]byte(strconv.Itoa(len(spec))+"\n"), spec...)
}

// errHandoffCut says the spec on stdin was cut short: the gateway died
// while handing it over. The shim then claims nothing and runs nothing,
// so the next gateway finds the attempt unclaimed and queues it again.
var errHandoffCut = errors.New("the spec on stdin was cut short")

// readSpecFrom reads the attempt's spec: from stdin when it is a pipe
// (the spec Launch hands over), else from dir/spec.json, as a gateway
// from before the pipe wrote it.
func readSpecFrom(stdin *os.File, dir string) (Spec, error) {
	fi, err := stdin.Stat()
	if err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		return ReadSpec(dir)
	}
	body, err := readFrame(stdin)
	if err != nil {
		return Spec{}, err
	}
	return decodeSpec(body)
}

// readFrame reads r to its end and returns the body of the one frame it
// holds (see frame): errHandoffCut when it was cut short or is empty.
func readFrame(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read the spec from stdin: %w", err)
	}
	head, body, ok := bytes.Cut(b, []byte("\n"))
	n, nerr := strconv.Atoi(string(head))
	switch {
	case len(b) == 0, ok && nerr == nil && len(body) < n, !ok && nerr == nil:
		return nil, errHandoffCut
	case !ok || nerr != nil || len(body) != n:
		return nil, errors.New("the spec on stdin is not framed as <length>\\n<json>")
	}
	return body, nil
}

// decodeSpec decodes and validates the JSON of a spec handed over on
// stdin.
func decodeSpec(b []byte) (Spec, error) {
	var s Spec
	if err := json.Unmarshal(b, &s); err != nil {
		return Spec{}, fmt.Errorf("read the spec from stdin: %w", err)
	}
	if err := s.Validate(); err != nil {
		return Spec{}, fmt.Errorf("the spec on stdin: %w", err)
	}
	return s, nil
}
