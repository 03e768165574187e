// Command flowgate is the flowgate command line: see 'flowgate --help'.
package main

import "github.com/flowgate/flowgate/cli"

func main() { cli.Run() }
