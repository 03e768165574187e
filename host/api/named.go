package api

import (
	"context"
	"net/http"
)

// named is the endpoint of a call on one record named by the path value
// key (a cron job's ref, a trigger's name) that takes no query and no
// body: it answers 200 with what call returns for that name.
func named[T any](key string, call func(ctx context.Context, name string) (T, error)) endpoint {
	return func(_ http.ResponseWriter, r *http.Request) (int, any, error) {
		if _, err := parseQuery(r); err != nil {
			return 0, nil, err
		}
		v, err := call(r.Context(), r.PathValue(key))
		return http.StatusOK, v, err
	}
}

// enabling is the endpoint that enables (or disables) the record named by
// the path value key: it answers 200 with what set returns, given who
// asked from the body's by. The body may be absent, as a client from
// before by was sent leaves it: then nobody is named.
func enabling[T any](key string, set func(ctx context.Context, name string, enabled bool, by string) (T, error), enabled bool) endpoint {
	return func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		var in byRequest
		if r.ContentLength == 0 {
			if _, err := parseQuery(r); err != nil {
				return 0, nil, err
			}
		} else if err := decodeRequest(w, r, &in); err != nil {
			return 0, nil, err
		}
		v, err := set(r.Context(), r.PathValue(key), enabled, in.By)
		return http.StatusOK, v, err
	}
}
