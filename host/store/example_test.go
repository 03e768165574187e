package store_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/flowgate/flowgate/host/store"
)

// Open a store, create a record, then update it only if nobody else has
// since: a compare-and-swap on the revision. The refusal is reported
// through a captured variable, not as the function's error, so that other
// writers committed in the same transaction are not rolled back with it.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "flowgate-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	s, err := store.Open(filepath.Join(dir, "flowgate.db"), store.Options{Owner: "flowgate example"})
	if err != nil {
		log.Fatal(err) // errors.Is(err, store.ErrLocked) or store.ErrCorrupt say why
	}
	defer s.Close()
	ctx := context.Background() // a program's root; a request or a loop passes its own

	err = s.Update(ctx, func(tx store.Tx) error {
		_, err := tx.Put("flow/42", []byte(`{"status":"queued"}`))
		return err
	})
	if err != nil {
		log.Fatal(err)
	}

	casUpdate := func(expected int64, value string) (bool, error) {
		var swapped bool
		err := s.Update(ctx, func(tx store.Tx) error {
			swapped = false // the function may run more than once
			item, err := tx.Get("flow/42")
			if err != nil || item.Revision != expected {
				return err
			}
			_, err = tx.Put("flow/42", []byte(value))
			swapped = err == nil
			return err
		})
		return swapped, err
	}
	fmt.Println(casUpdate(1, `{"status":"running"}`))
	fmt.Println(casUpdate(1, `{"status":"cancelled"}`)) // stale: revision is 2 now

	err = s.View(ctx, func(tx store.ReadTx) error {
		item, err := tx.Get("flow/42")
		if errors.Is(err, store.ErrKeyNotFound) {
			return nil
		}
		fmt.Println(item.Revision, string(item.Value))
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// true <nil>
	// false <nil>
	// 2 {"status":"running"}
}
