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

// enabling is set(ctx, name, enabled) as a call on one named record.
func enabling[T any](set func(ctx context.Context, name string, enabled bool) (T, error), enabled bool) func(context.Context, string) (T, error) {
	return func(ctx context.Context, name string) (T, error) { return set(ctx, name, enabled) }
}
