package apierr

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"
)

func TestStatus(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{BadRequest("x"), http.StatusBadRequest},
		{fmt.Errorf("wrapped: %w", NotFound("topic %q", "a")), http.StatusNotFound},
		{Unavailable(time.Second, "later"), http.StatusServiceUnavailable},
		{errors.New("disk on fire"), http.StatusInternalServerError},
	}
	for _, c := range cases {
		if got := Status(c.err); got != c.want {
			t.Errorf("Status(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	if e := NotFound("topic %q does not exist", "a"); e.Error() != `topic "a" does not exist` {
		t.Fatalf("message: %q", e.Error())
	}
}
