package move

import (
	"context"
	"errors"
	"testing"
)

type confirmFunc func() (string, error)

func (f confirmFunc) ConfirmOwner(context.Context, string, int) (string, string, error) {
	o, err := f()
	return o, "", err
}

type countingThawer struct{ thawed []string }

func (c *countingThawer) Thaw(topic string, _ int, holder string) (bool, error) {
	c.thawed = append(c.thawed, topic+"/"+holder)
	return true, nil
}

// TestThawIfOwner: the freeze lifts only when the leader confirms this
// node still owns the partition; a flip elsewhere or an unconfirmed owner
// leaves it frozen.
func TestThawIfOwner(t *testing.T) {
	down := errors.New("leader unreachable")
	for _, tc := range []struct {
		name    string
		owner   string
		err     error
		thawed  bool
		refused bool
	}{
		{"still the owner", "src", nil, true, false},
		{"flipped to another node", "dst", nil, false, true},
		{"owner not confirmed", "", down, false, true},
	} {
		th := &countingThawer{}
		err := ThawIfOwner(context.Background(), confirmFunc(func() (string, error) { return tc.owner, tc.err }), th, "src", "orders", 3, "h")
		if got := len(th.thawed) == 1; got != tc.thawed {
			t.Errorf("%s: thawed %v, want %v", tc.name, th.thawed, tc.thawed)
		}
		var refused *ThawRefusedError
		if errors.As(err, &refused) != tc.refused {
			t.Errorf("%s: error %v, refused want %v", tc.name, err, tc.refused)
		}
		if tc.err != nil && !errors.Is(err, tc.err) {
			t.Errorf("%s: the cause is lost: %v", tc.name, err)
		}
	}
}
