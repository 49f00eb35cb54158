package main

import "testing"

// The signer reproduces the published vectors of AWS's SigV4 test suite
// (the same ones internal/auth's verifier is tested against): the same
// request, key and date give the same signature, byte for byte.
func TestSigV4SignerPublishedVectors(t *testing.T) {
	s := &sigv4{keyID: "AKIDEXAMPLE", secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", region: "us-east-1", service: "service"}
	const date = "20150830T123600Z"
	// A request of the next day first: the cached key must follow the
	// date, or every signature below is wrong.
	s.authorization("GET", "/", []sigHeader{{"host", "example.amazonaws.com"}, {"x-amz-date", "20150831T123600Z"}}, nil, "20150831T123600Z")
	for _, tt := range []struct {
		name, method, body string
		headers            []sigHeader
		want               string
	}{
		{
			name: "get-vanilla", method: "GET",
			headers: []sigHeader{{"host", "example.amazonaws.com"}, {"x-amz-date", date}},
			want:    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
		},
		{
			name: "post-x-www-form-urlencoded", method: "POST", body: "Param1=value1",
			headers: []sigHeader{{"content-type", "application/x-www-form-urlencoded"}, {"host", "example.amazonaws.com"}, {"x-amz-date", date}},
			want:    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a",
		},
	} {
		// Twice: the second signature uses the cached key.
		for range 2 {
			if got := s.authorization(tt.method, "/", tt.headers, []byte(tt.body), date); got != tt.want {
				t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
			}
		}
	}
}

// BenchmarkSigV4Sign signs a ReceiveMessage as the bench does, once per
// request.
func BenchmarkSigV4Sign(b *testing.B) {
	s := &sigv4{keyID: "AKIDEXAMPLE", secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", region: "us-east-1", service: "sqs"}
	body := []byte(`{"QueueUrl":"http://127.0.0.1:7942/000000000000/bench-x","MaxNumberOfMessages":1,"WaitTimeSeconds":1}`)
	headers := []sigHeader{{"content-type", sqsContentType}, {"host", "127.0.0.1:7942"}, {"x-amz-date", "20261204T043000Z"}, {"x-amz-target", "AmazonSQS.ReceiveMessage"}}
	b.ReportAllocs()
	for b.Loop() {
		s.authorization("POST", "/", headers, body, "20261204T043000Z")
	}
}
