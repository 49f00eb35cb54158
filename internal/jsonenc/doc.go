// Package jsonenc writes JSON by appending to a byte slice, for the
// answers that are built by hand because reflection was a measurable
// share of their CPU: the API's delivered records (package httpapi), the
// SNS notification of a fan-out copy (package fanout) and the SQS and SNS
// answers (package awsapi).
//
// Its invariant: whatever it appends is valid JSON that encoding/json
// reads back to the value given — a string's invalid UTF-8 becomes
// U+FFFD, as encoding/json's own encoder does — and, HTML escaping aside
// (<, > and & are written as they are), byte for byte what encoding/json
// would write.
package jsonenc
