package awsapi

import "net/http"

// SNS's own error codes beyond those of errors.go (the SNS 2010-03-31 API
// reference; the SDKs map each code to its typed error).
var (
	errSNSResourceNotFound = errorKind{code: "ResourceNotFound", status: http.StatusNotFound}
)

// snsAction wraps an SNS action so that the shared parameter readers'
// refusals (params.go, awsattr: InvalidParameterValue and
// MissingParameter, SQS's names) come back as SNS's InvalidParameter,
// the code SNS answers for a bad or missing parameter, and the batch
// refusals SNS shares with SQS with SNS's Query codes (SQS's carry the
// AWS.SimpleQueueService. prefix), a missing queue as a missing topic.
func snsAction(f func(*Edge, *call) (map[string]any, error)) func(*Edge, *call) (map[string]any, error) {
	return func(e *Edge, c *call) (map[string]any, error) {
		out, err := f(e, c)
		return out, snsError(err)
	}
}

func snsError(err error) error {
	ae, ok := err.(*Error)
	if !ok {
		return err
	}
	switch ae.Code {
	case errInvalidParameter.code, errMissingParameter.code, errInvalidAttributeValue.code, errInvalidAttributeName.code:
		return &Error{Code: errSNSInvalidParam.code, Status: errSNSInvalidParam.status, Message: ae.Message}
	case errQueueDoesNotExist.code:
		// The shared readers' queue is an SNS action's topic.
		return errNotFound.f("Topic does not exist: %s", ae.Message)
	case errEmptyBatch.code, errTooManyEntries.code, errIdsNotDistinct.code, errInvalidBatchEntryID.code, errBatchTooLong.code:
		return &Error{Code: ae.Code, Status: ae.Status, Message: ae.Message}
	}
	return err
}
