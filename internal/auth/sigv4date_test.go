package auth

import (
	"strings"
	"testing"
	"time"
)

// FuzzSigV4DatesMatchTimeParse: the hand-written readers of X-Amz-Date and
// the scope's day accept what time.Parse accepts for those layouts, at
// the same instant, and refuse what it refuses — but for an X-Amz-Date
// with a fractional second (after '.' or ','), which time.Parse takes and
// AWS's format has no place for.
func FuzzSigV4DatesMatchTimeParse(f *testing.F) {
	for _, s := range []string{"20130524T000000Z", "20240229T235959Z", "20230229T000000Z", "20131324T000000Z",
		"20130524T240000Z", "20130524T126000Z", "20130524T120060Z", "20130524T000000", "20130524t000000Z",
		"2013052T0000000Z", "00000101T000000Z", "99991231T235959Z", "20130431T000000Z", "+0130524T000000Z",
		"20130524T12:00:Z", "20130524T120000.5Z", "20130524", "20130500", "2013052 ", "20230229", "20240229",
		"20130431", "20131301", "20130024", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := time.Parse(amzDateLayout, s)
		got, ok := parseAmzDate(s)
		switch {
		case ok && (err != nil || !got.Equal(want) || got.Location() != time.UTC):
			t.Fatalf("parseAmzDate(%q) = %v, time.Parse: %v, %v", s, got, want, err)
		case !ok && err == nil && !strings.ContainsAny(s, ".,"):
			t.Fatalf("parseAmzDate(%q) refused what time.Parse reads as %v", s, want)
		}
		_, err = time.Parse("20060102", s)
		if ok := validScopeDate(s); ok != (err == nil && len(s) == 8) {
			t.Fatalf("validScopeDate(%q) = %v, time.Parse: %v", s, ok, err)
		}
	})
}

// TestCredentialScopeParts: a Credential is exactly five parts split at
// '/', as strings.Split counts them, with the key id, region and service
// not empty.
func TestCredentialScopeParts(t *testing.T) {
	const at = "20130524T000000Z"
	for _, tc := range []struct {
		cred string
		ok   bool
	}{
		{"AKID/20130524/us-east-1/sqs/aws4_request", true},
		{"AKID/20130524/us-east-1/sqs/aws4_request/", false},
		{"AKID/20130524/us-east-1/sqs/aws4_request/x", false},
		{"AKID/20130524/us-east-1/sqs", false},
		{"AKID/20130524/us-east-1/sqs/", false},
		{"/20130524/us-east-1/sqs/aws4_request", false},
		{"AKID/20130524//sqs/aws4_request", false},
		{"AKID/20130524/us-east-1//aws4_request", false},
		{"AKID/2013052/us-east-1/sqs/aws4_request", false},
		{"AKID/20130524/us-east-1/sqs/aws4_reques", false},
		{"", false},
		{"////", false},
	} {
		req := &sigV4Request{}
		err := req.fill(tc.cred, "host;x-amz-date", strings.Repeat("ab", 32), at)
		if (err == nil) != tc.ok {
			t.Errorf("fill(%q) = %v, want ok %v", tc.cred, err, tc.ok)
		}
		if err == nil && (req.keyID != "AKID" || req.date != "20130524" || req.region != "us-east-1" || req.service != "sqs") {
			t.Errorf("fill(%q) read %q %q %q %q", tc.cred, req.keyID, req.date, req.region, req.service)
		}
	}
}
