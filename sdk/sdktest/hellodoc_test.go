package sdktest_test

import (
	"os"
	"strings"
	"testing"
)

// docs/writing-controllers.md shows TestHello, of the hello example, as
// the way to test a controller with sdktest; it must quote the test
// verbatim, so the example it shows is one CI runs. (It lives here, not
// in the example, so that the example's folder works when copied alone.)
func TestWritingControllersQuotesTestHello(t *testing.T) {
	src, err := os.ReadFile("../../examples/controllers/hello/main_test.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/writing-controllers.md")
	if err != nil {
		t.Fatal(err)
	}
	_, fn, ok := strings.Cut(string(src), "\nfunc TestHello(")
	fn, _, _ = strings.Cut(fn, "\n}\n")
	if !ok || !strings.Contains(string(doc), "func TestHello("+fn+"\n}\n") {
		t.Fatal("docs/writing-controllers.md does not quote TestHello of examples/controllers/hello/main_test.go verbatim; copy the function into its \"Testing with sdktest\" section")
	}
}
