package storetest

import (
	"context"
	"reflect"
	"testing"
)

// RequireContextFirst fails for each exported method of types that takes
// no context.Context as its first argument and is not in exempt (by
// "Type.Method"), and for each entry of exempt that names no method. It
// returns the methods it found taking one.
func RequireContextFirst(t *testing.T, types []reflect.Type, exempt map[string]string) map[string]bool {
	t.Helper()
	ctxType := reflect.TypeFor[context.Context]()
	withCtx, seen := map[string]bool{}, map[string]bool{}
	for _, typ := range types {
		name := typ.Name()
		if typ.Kind() == reflect.Pointer {
			name = typ.Elem().Name()
		}
		first := 1 // a concrete type's methods take the receiver first
		if typ.Kind() == reflect.Interface {
			first = 0
		}
		for i := range typ.NumMethod() {
			m := typ.Method(i)
			key := name + "." + m.Name
			seen[key] = true
			if m.Type.NumIn() > first && m.Type.In(first) == ctxType {
				withCtx[key] = true
				continue
			}
			if _, ok := exempt[key]; !ok {
				t.Errorf("%s takes no context.Context first: add one (a store call on etcd is a network call), or, for a pure accessor, add it to this test's exemptions with the reason", key)
			}
		}
	}
	for key := range exempt {
		if !seen[key] {
			t.Errorf("exemption %s names no method; drop it", key)
		}
	}
	return withCtx
}
