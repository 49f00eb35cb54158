package awsapi

import (
	"fmt"
	"net/http"
)

// Error is an answer refused as AWS refuses it: its code, as the SDKs map
// it to their typed errors, and its HTTP status.
type Error struct {
	// Code is the error's name in the JSON protocol's __type (after the
	// '#'), for SNS and common errors the Query code too.
	Code string
	// QueryCode is the code the Query protocol and the JSON protocol's
	// x-amzn-query-error header give, when it differs from Code (SQS's
	// older names: AWS.SimpleQueueService.NonExistentQueue for
	// QueueDoesNotExist).
	QueryCode string
	Status    int
	// Receiver marks a fault of the server's, not of the request.
	Receiver bool
	Message  string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// queryCode is the code the Query protocol names.
func (e *Error) queryCode() string {
	if e.QueryCode != "" {
		return e.QueryCode
	}
	return e.Code
}

func (e *Error) faultType() string {
	if e.Receiver {
		return "Receiver"
	}
	return "Sender"
}

// errorKind is one row of the error table: everything but the message.
type errorKind struct {
	code, query string
	status      int
	receiver    bool
}

func (k errorKind) f(format string, args ...any) *Error {
	return &Error{Code: k.code, QueryCode: k.query, Status: k.status, Receiver: k.receiver, Message: fmt.Sprintf(format, args...)}
}

// The errors this edge answers (AWS's API references: SQS 2012-11-05,
// SNS 2010-03-31, and their common errors).
var (
	// Common to both services.
	errMissingParameter   = errorKind{code: "MissingParameter", status: http.StatusBadRequest}
	errInvalidParameter   = errorKind{code: "InvalidParameterValue", status: http.StatusBadRequest}
	errInvalidAction      = errorKind{code: "InvalidAction", status: http.StatusBadRequest}
	errUnknownOperation   = errorKind{code: "UnknownOperationException", status: http.StatusBadRequest} // the JSON protocol's
	errAccessDenied       = errorKind{code: "AccessDenied", status: http.StatusForbidden}
	errServiceUnavailable = errorKind{code: "ServiceUnavailable", status: http.StatusServiceUnavailable, receiver: true}
	errInternal           = errorKind{code: "InternalFailure", status: http.StatusInternalServerError, receiver: true}
	errThrottled          = errorKind{code: "RequestThrottled", status: http.StatusBadRequest}
	errMalformedBody      = errorKind{code: "MalformedQueryString", status: http.StatusBadRequest}

	// SQS.
	errQueueDoesNotExist      = errorKind{code: "QueueDoesNotExist", query: "AWS.SimpleQueueService.NonExistentQueue", status: http.StatusBadRequest}
	errQueueNameExists        = errorKind{code: "QueueNameExists", query: "QueueAlreadyExists", status: http.StatusBadRequest}
	errReceiptHandleInvalid   = errorKind{code: "ReceiptHandleIsInvalid", status: http.StatusBadRequest}
	errMessageNotInflight     = errorKind{code: "MessageNotInflight", query: "AWS.SimpleQueueService.MessageNotInflight", status: http.StatusBadRequest}
	errInvalidMessageContents = errorKind{code: "InvalidMessageContents", status: http.StatusBadRequest}
	errInvalidAttributeName   = errorKind{code: "InvalidAttributeName", status: http.StatusBadRequest}
	errInvalidAttributeValue  = errorKind{code: "InvalidAttributeValue", status: http.StatusBadRequest}
	errTooManyEntries         = errorKind{code: "TooManyEntriesInBatchRequest", query: "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", status: http.StatusBadRequest}
	errEmptyBatch             = errorKind{code: "EmptyBatchRequest", query: "AWS.SimpleQueueService.EmptyBatchRequest", status: http.StatusBadRequest}
	errIdsNotDistinct         = errorKind{code: "BatchEntryIdsNotDistinct", query: "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", status: http.StatusBadRequest}
	errBatchTooLong           = errorKind{code: "BatchRequestTooLong", query: "AWS.SimpleQueueService.BatchRequestTooLong", status: http.StatusBadRequest}
	errInvalidBatchEntryID    = errorKind{code: "InvalidBatchEntryId", query: "AWS.SimpleQueueService.InvalidBatchEntryId", status: http.StatusBadRequest}
	errPurgeInProgress        = errorKind{code: "PurgeQueueInProgress", query: "AWS.SimpleQueueService.PurgeQueueInProgress", status: http.StatusForbidden}
	errUnsupportedOperation   = errorKind{code: "UnsupportedOperation", query: "AWS.SimpleQueueService.UnsupportedOperation", status: http.StatusBadRequest}
	errResourceNotFound       = errorKind{code: "ResourceNotFoundException", status: http.StatusNotFound}

	// SNS.
	errNotFound           = errorKind{code: "NotFound", status: http.StatusNotFound}
	errSNSInvalidParam    = errorKind{code: "InvalidParameter", status: http.StatusBadRequest}
	errAuthorizationError = errorKind{code: "AuthorizationError", status: http.StatusForbidden}
	errSNSThrottled       = errorKind{code: "Throttled", status: http.StatusTooManyRequests}
)
