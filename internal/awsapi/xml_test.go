package awsapi

import (
	"strings"
	"testing"
)

// An SQS action with output answers its <ActionResult> even when the
// output is empty (botocore's Query parser requires it); one without
// output answers none.
func TestWriteXMLEmptyResult(t *testing.T) {
	for _, tc := range []struct {
		action string
		want   bool
	}{
		{"ReceiveMessage", true}, {"ListQueues", true}, {"GetQueueAttributes", true}, {"ListQueueTags", true},
		{"DeleteMessage", false}, {"SetQueueAttributes", false},
	} {
		var b strings.Builder
		writeXML(&b, serviceSQS, tc.action, "rid", nil)
		if got := strings.Contains(b.String(), "<"+tc.action+"Result>"); got != tc.want {
			t.Errorf("%s with no output: result element %v, want %v:\n%s", tc.action, got, tc.want, b.String())
		}
	}
}
