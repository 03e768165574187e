package storetest

import (
	"fmt"
	"testing"

	"github.com/flowgate/flowgate/host/store"
	"github.com/stretchr/testify/require"
)

// keyN returns prefix followed by i, zero-padded so keys sort by i.
func keyN(prefix string, i int) string { return fmt.Sprintf("%s%03d", prefix, i) }

// valueN returns a value that identifies i.
func valueN(i int) string { return fmt.Sprintf("value-%d", i) }

// scanKeys returns the keys Scan visits, in order.
func scanKeys(t *testing.T, s store.Store, prefix string, opts store.ScanOptions) []string {
	t.Helper()
	keys := []string{}
	require.NoError(t, s.View(t.Context(), func(tx store.ReadTx) error {
		return tx.Scan(prefix, opts, func(it store.Item) bool {
			keys = append(keys, it.Key)
			return true
		})
	}))
	return keys
}

// seedScan writes keys around the prefix "a/" so that scans must stop at
// both edges of it.
func seedScan(t *testing.T, s store.Store) {
	t.Helper()
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		for _, k := range []string{"a", "a/1", "a/2", "a/3", "a0", "ab/1", "b/1", "Z", "a/\xff", "a/\xff\xff"} {
			if _, err := tx.Put(k, []byte("v:"+k)); err != nil {
				return err
			}
		}
		return nil
	}))
}

func testScanOrder(t *testing.T, s store.Store) {
	seedScan(t, s)
	require.Equal(t, []string{"a/1", "a/2", "a/3", "a/\xff", "a/\xff\xff"}, scanKeys(t, s, "a/", store.ScanOptions{}))
	require.Equal(t, []string{"a", "a/1", "a/2", "a/3", "a/\xff", "a/\xff\xff", "a0", "ab/1"}, scanKeys(t, s, "a", store.ScanOptions{}))
	require.Equal(t, []string{"a/\xff", "a/\xff\xff"}, scanKeys(t, s, "a/\xff", store.ScanOptions{}))
	require.Equal(t, []string{"Z", "a", "a/1", "a/2", "a/3", "a/\xff", "a/\xff\xff", "a0", "ab/1", "b/1"}, scanKeys(t, s, "", store.ScanOptions{}))
	require.Empty(t, scanKeys(t, s, "c/", store.ScanOptions{}))

	var item store.Item
	require.NoError(t, s.View(t.Context(), func(tx store.ReadTx) error {
		return tx.Scan("b/", store.ScanOptions{}, func(it store.Item) bool {
			item = it
			return true
		})
	}))
	require.Equal(t, store.Item{Key: "b/1", Value: []byte("v:b/1"), Revision: 1}, item)
}

func testScanAfter(t *testing.T, s store.Store) {
	seedScan(t, s)
	for _, tt := range []struct {
		after string
		want  []string
	}{
		{"a/1", []string{"a/2", "a/3", "a/\xff", "a/\xff\xff"}},
		{"a/15", []string{"a/2", "a/3", "a/\xff", "a/\xff\xff"}}, // a cursor need not exist
		{"a/3", []string{"a/\xff", "a/\xff\xff"}},
		{"a/\xff\xff", []string{}},
		{"a/", []string{"a/1", "a/2", "a/3", "a/\xff", "a/\xff\xff"}},
		{"A", []string{"a/1", "a/2", "a/3", "a/\xff", "a/\xff\xff"}}, // before the prefix
		{"b", []string{}}, // past the prefix
	} {
		require.Equal(t, tt.want, scanKeys(t, s, "a/", store.ScanOptions{After: tt.after}), "after %q", tt.after)
	}
}

func testScanReverse(t *testing.T, s store.Store) {
	seedScan(t, s)
	rev := store.ScanOptions{Reverse: true}
	require.Equal(t, []string{"a/\xff\xff", "a/\xff", "a/3", "a/2", "a/1"}, scanKeys(t, s, "a/", rev))
	require.Equal(t, []string{"a/\xff\xff", "a/\xff"}, scanKeys(t, s, "a/\xff", rev))
	require.Equal(t, []string{"b/1", "ab/1", "a0", "a/\xff\xff", "a/\xff", "a/3", "a/2", "a/1", "a", "Z"}, scanKeys(t, s, "", rev))
	require.Empty(t, scanKeys(t, s, "c/", rev))

	for _, tt := range []struct {
		after string
		want  []string
	}{
		{"a/3", []string{"a/2", "a/1"}},
		{"a/25", []string{"a/2", "a/1"}},
		{"a/1", []string{}},
		{"a/\xff", []string{"a/3", "a/2", "a/1"}},
		{"b", []string{"a/\xff\xff", "a/\xff", "a/3", "a/2", "a/1"}}, // past the prefix
		{"A", []string{}},                                            // before the prefix
	} {
		require.Equal(t, tt.want, scanKeys(t, s, "a/", store.ScanOptions{Reverse: true, After: tt.after}), "reverse after %q", tt.after)
	}
}

func testScanLimitAndPaging(t *testing.T, s store.Store) {
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		for i := range 25 {
			if _, err := tx.Put(keyN("p/", i), []byte(valueN(i))); err != nil {
				return err
			}
		}
		_, err := tx.Put("q/0", nil)
		return err
	}))
	require.Len(t, scanKeys(t, s, "p/", store.ScanOptions{Limit: 10}), 10)
	require.Len(t, scanKeys(t, s, "p/", store.ScanOptions{Limit: 100}), 25)

	for _, reverse := range []bool{false, true} {
		var all []string
		after := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 10, "paging does not end")
			page := scanKeys(t, s, "p/", store.ScanOptions{After: after, Reverse: reverse, Limit: 7})
			if len(page) == 0 {
				break
			}
			all = append(all, page...)
			after = page[len(page)-1]
		}
		require.Len(t, all, 25)
		for i, k := range all {
			want := i
			if reverse {
				want = 24 - i
			}
			require.Equal(t, keyN("p/", want), k)
		}
	}
}

func testScanEarlyStop(t *testing.T, s store.Store) {
	seedScan(t, s)
	for _, reverse := range []bool{false, true} {
		calls := 0
		require.NoError(t, s.View(t.Context(), func(tx store.ReadTx) error {
			return tx.Scan("a/", store.ScanOptions{Reverse: reverse}, func(store.Item) bool {
				calls++
				return calls < 2
			})
		}))
		require.Equal(t, 2, calls, "reverse=%v", reverse)
	}
}
