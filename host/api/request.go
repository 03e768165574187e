package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/flowgate/flowgate/sdk"
)

// parseQuery returns r's query, refusing a malformed one, a parameter not
// in names and a parameter given twice.
func parseQuery(r *http.Request, names ...string) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("%w: malformed query string: %v", sdk.ErrInvalid, err)
	}
	for _, k := range slices.Sorted(maps.Keys(q)) {
		if !slices.Contains(names, k) {
			if len(names) == 0 {
				return nil, fmt.Errorf("%w: %s %s takes no query parameters, got %q", sdk.ErrInvalid, r.Method, r.URL.Path, k)
			}
			return nil, fmt.Errorf("%w: unknown query parameter %q (accepted: %s)", sdk.ErrInvalid, k, strings.Join(names, ", "))
		}
		if n := len(q[k]); n > 1 {
			return nil, fmt.Errorf("%w: query parameter %q is given %d times; give it once", sdk.ErrInvalid, k, n)
		}
	}
	return q, nil
}

// parseLimit reads a page size: empty is zero (no limit).
func parseLimit(v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: limit %q is not a whole number of at least 0", sdk.ErrInvalid, v)
	}
	return n, nil
}

// decodeRequest reads r's body, which must be exactly one JSON value with
// no field v does not have, into v.
func decodeRequest(w http.ResponseWriter, r *http.Request, v any) error {
	if _, err := parseQuery(r); err != nil {
		return err
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequestBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bodyError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return bodyError(err)
		}
		return fmt.Errorf("%w: request body holds more than one JSON value; send one object", sdk.ErrInvalid)
	}
	return nil
}

// bodyError explains why a request body could not be decoded.
func bodyError(err error) error {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return fmt.Errorf("%w: request body is larger than %d bytes (%w)", sdk.ErrInvalid, maxRequestBody, err)
	}
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: request body is empty; send a JSON object", sdk.ErrInvalid)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: malformed JSON in request body: it ends too early", sdk.ErrInvalid)
	}
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return fmt.Errorf("%w: malformed JSON in request body at byte %d: %v", sdk.ErrInvalid, se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	}
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		where := "request body"
		if te.Field != "" {
			where = "field " + te.Field
		}
		return fmt.Errorf("%w: %s holds a JSON %s, want %s", sdk.ErrInvalid, where, te.Value, jsonKind(te.Type))
	}
	return fmt.Errorf("%w: request body: %s", sdk.ErrInvalid, strings.TrimPrefix(err.Error(), "json: "))
}

// jsonKind names the JSON type that decodes into t.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "another type"
}
