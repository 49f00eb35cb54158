//go:build !narad_crashpoints

package hosted

// crashpoint marks a point between two steps whose order a crash test
// checks (a build with the narad_crashpoints tag can stop there; see
// crashpoint_on.go). In every other build it is nothing.
func crashpoint(string) {}
