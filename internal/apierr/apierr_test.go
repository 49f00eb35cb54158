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

func TestAtIndexNamesTheRecordAndKeepsTheRest(t *testing.T) {
	base := TooLarge("record 3: payload of %d bytes is over the 1 MiB cap", 2<<20)
	e := base.AtIndex(3)
	if e.Index == nil || *e.Index != 3 || e.Status != http.StatusRequestEntityTooLarge || e.Message != base.Message {
		t.Fatalf("AtIndex: %+v", e)
	}
	if base.Index != nil {
		t.Fatal("AtIndex changed the error it was called on")
	}
}
