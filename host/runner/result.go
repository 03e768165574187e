package runner

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/sdk"
)

// maxJSONResult bounds the stdout kept in the record as text and parsed
// as the task's JSON result (larger output stays in the log file only);
// maxSummary bounds the summary line.
const (
	maxJSONResult = 256 << 10
	maxSummary    = 200
	tailBytes     = 8 << 10
)

// readResult digests an attempt's stdout file: its SHA-256 and size, its
// JSON value when the whole output is one small JSON document, and its last
// non-empty line as a summary. It streams the file, so a huge output costs
// time, not memory, and reads it only as long as it was when opened (a
// process that left the task's group may still be writing to it). A
// missing file is an empty output; one that is not a regular file (the
// task replaced it) is refused (see shim.OpenTaskFile).
func readResult(path string) (*sdk.Result, error) {
	f, err := shim.OpenTaskFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &sdk.Result{StdoutSHA256: hex.EncodeToString(sha256.New().Sum(nil))}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	n, err := io.CopyN(h, f, fi.Size())
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	res := &sdk.Result{StdoutSHA256: hex.EncodeToString(h.Sum(nil)), StdoutBytes: n}
	if n > sdk.InlineStdout {
		res.StdoutPath = path
	}
	if n > 0 && n <= maxJSONResult {
		b := make([]byte, n)
		if _, err := f.ReadAt(b, 0); err == nil {
			res.Stdout = string(b)
			if json.Valid(bytes.TrimSpace(b)) {
				res.JSON = json.RawMessage(bytes.TrimSpace(b))
			}
		}
	}
	tail, err := fileTail(f, n, tailBytes)
	if err != nil {
		return nil, err
	}
	res.Summary = lastLine(tail)
	return res, nil
}

// ReadTail is readTail for readers outside the runner: the stderr a
// failure notice quotes, the stdout a cron announcement posts.
func ReadTail(path string, n int64) (string, error) { return readTail(path, n) }

// readTail returns up to n bytes from the end of the file at path; a
// missing file has none, and one that is not a regular file is refused
// (see shim.OpenTaskFile).
func readTail(path string, n int64) (string, error) {
	f, err := shim.OpenTaskFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	return fileTail(f, fi.Size(), n)
}

// fileTail returns up to n bytes from the end of f, size bytes long.
func fileTail(f *os.File, size, n int64) (string, error) {
	off := max(size-n, 0)
	b := make([]byte, size-off)
	m, err := f.ReadAt(b, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	return string(b[:m]), nil
}

// lastLine returns the last non-empty line of s, cut to maxSummary.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n\r\t "), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if !utf8.ValidString(last) {
		last = strings.ToValidUTF8(last, "?")
	}
	if r := []rune(last); len(r) > maxSummary {
		last = string(r[:maxSummary-1]) + "…"
	}
	return last
}
