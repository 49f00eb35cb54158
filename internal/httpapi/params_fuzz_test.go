package httpapi

import (
	"net/url"
	"strconv"
	"testing"
	"time"
)

// FuzzQueryParams feeds a raw query string through the parsers every
// message route uses (as net/http hands it to them: URL.Query, which
// drops malformed pairs). Accepted numbers are non-negative and mean what
// they spell; accepted waits are non-negative; refusals are 400s; and
// onlyParams lets through exactly the allowed names.
func FuzzQueryParams(f *testing.F) {
	for _, s := range []string{
		"partition=3&key=k", "partition=-1", "partition=+1", "partition=007", "partition=9999999999999999999999",
		"offset=18446744073709551615", "offset=18446744073709551616", "offset=+0",
		"wait=500ms", "wait=10s", "wait=1500", "wait=-1", "wait=-1s", "wait=1h2m", "wait=1e3",
		"max=1000", "max=0", "extnd=true", "partition=1&partition=2", "%zz=1", "wait=",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q := (&url.URL{RawQuery: raw}).Query()
		for _, name := range []string{"partition", "max"} {
			n, err := optInt(q, name)
			switch {
			case err != nil:
				clientErr(t, name, err)
			case n == nil:
				if q.Has(name) {
					t.Fatalf("%s=%q present but read as absent", name, q.Get(name))
				}
			case *n < 0:
				t.Fatalf("%s=%q accepted as %d", name, q.Get(name), *n)
			default:
				if back, _ := strconv.Atoi(strconv.Itoa(*n)); back != *n {
					t.Fatalf("%s=%q read as %d", name, q.Get(name), *n)
				}
				if v, _ := strconv.ParseInt(q.Get(name), 10, 64); v != int64(*n) {
					t.Fatalf("%s=%q read as %d", name, q.Get(name), *n)
				}
			}
		}
		if n, err := optUint(q, "offset"); err != nil {
			clientErr(t, "offset", err)
		} else if n != nil {
			if v, perr := strconv.ParseUint(q.Get("offset"), 10, 64); perr != nil || v != *n {
				t.Fatalf("offset=%q read as %d", q.Get("offset"), *n)
			}
		}
		if d, err := parseWait(q); err != nil {
			clientErr(t, "wait", err)
		} else if d < 0 || (!q.Has("wait") && d != 0) {
			t.Fatalf("wait=%q read as %v", q.Get("wait"), d)
		} else if ms, perr := strconv.ParseInt(q.Get("wait"), 10, 64); perr == nil && d != time.Duration(ms)*time.Millisecond {
			t.Fatalf("wait=%q (integer milliseconds) read as %v", q.Get("wait"), d)
		}
		allowed := []string{"key", "partition"}
		err := onlyParams(q, allowed...)
		unknown := false
		for name := range q {
			unknown = unknown || (name != "key" && name != "partition")
		}
		if unknown != (err != nil) {
			t.Fatalf("onlyParams(%q) = %v, unknown name present: %v", raw, err, unknown)
		}
		if err != nil {
			clientErr(t, "onlyParams", err)
		}
	})
}
