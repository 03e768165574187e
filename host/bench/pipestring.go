package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// FigPipelineString is the typed-pipeline figure: a pipeline string of
// ten stages over 10,000 objects, against Lobster.
const FigPipelineString = "pipeline_string_10_stages"

// pipelineObjects is how many objects the pipeline string's exec stage
// prints.
const pipelineObjects = 10_000

// pipelineString is the ten-stage pipeline of the figure over the
// objects in file: exec --json, then where, sort, dedupe, groupBy, two
// maps, pick, head and the json renderer, as issue 30 names them.
func pipelineString(file string) string {
	return "exec --json --shell 'cat " + file + "' | where n>=10 | sort --key n --desc | dedupe | groupBy --key t | " +
		"map --wrap g | map t={{g.key}} count={{g.count}} | pick t,count | head --n 5 | json"
}

// pipelineItems writes the objects the pipeline string reads into dir
// and returns the file's name: compact, so that 10,000 of them stay
// under a step's 256 KiB of output, and each one twice, so that dedupe
// has work.
func pipelineItems(dir string) (string, error) {
	var b strings.Builder
	b.WriteByte('[')
	for i := range pipelineObjects {
		if i > 0 {
			b.WriteByte(',')
		}
		k := i % (pipelineObjects / 2)
		fmt.Fprintf(&b, `{"i":%d,"n":%d,"t":"%c"}`, k, (k*7919)%100, 'a'+rune(k%26))
	}
	b.WriteString("]\n")
	name := "objects.json"
	return name, os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o600)
}
