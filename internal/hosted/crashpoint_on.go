//go:build narad_crashpoints

package hosted

import (
	"fmt"
	"os"
)

// crashpoint, in a build with the narad_crashpoints tag (the crash tests'
// binary only), stops the calling goroutine for good at the point named
// by NARAD_CRASHPOINT, after saying so on stderr, so that a test can
// SIGKILL the process exactly between the two steps around it.
func crashpoint(name string) {
	if os.Getenv("NARAD_CRASHPOINT") != name {
		return
	}
	fmt.Fprintf(os.Stderr, "crashpoint %s reached: this goroutine stops here\n", name)
	select {}
}
