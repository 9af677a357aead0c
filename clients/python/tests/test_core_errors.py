"""The error mapping (``redlockd._errors``) from a gRPC status and its
details, with no daemon: the ``google.rpc.Status`` of the
``grpc-status-details-bin`` trailer is built here as the daemon builds it
(docs/design.md#the-wire-contract). (Real UNAVAILABLEs from a daemon with
three masters killed: test_kills_masters.py.)"""

import grpc
import pytest
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

import redlockd
from redlockd._errors import from_status


def status_details(metadata, reason="NO_QUORUM", also=()):
    info = any_pb2.Any()
    info.Pack(error_details_pb2.ErrorInfo(reason=reason, domain="redlockd", metadata=metadata))
    details = [*also, info]
    return status_pb2.Status(code=grpc.StatusCode.UNAVAILABLE.value[0], details=details).SerializeToString()


def test_unavailable_carries_what_each_master_said_by_index_and_the_quorum():
    metadata = {
        "node.4": "quarantined",
        "node.0": "granted",
        "node.10": "timed out",
        "node.2": "held by another owner",
        "needed": "3",
        "node.x": "not a master",
    }
    failed = from_status(grpc.StatusCode.UNAVAILABLE, "2 of 5 masters took part", status_details(metadata))
    assert type(failed) is redlockd.Unavailable and str(failed) == "2 of 5 masters took part"
    assert list(failed.nodes.items()) == [
        (0, "granted"),
        (2, "held by another owner"),
        (4, "quarantined"),
        (10, "timed out"),
    ], "not by index, in order"
    assert failed.needed == 3 and failed.code == grpc.StatusCode.UNAVAILABLE


def test_other_details_are_passed_over_and_no_details_mean_no_nodes():
    quota = any_pb2.Any()
    quota.Pack(error_details_pb2.QuotaFailure())
    failed = from_status(grpc.StatusCode.UNAVAILABLE, "m", status_details({"node.1": "errored"}, also=[quota]))
    assert failed.nodes == {1: "errored"} and failed.needed is None
    failed = from_status(grpc.StatusCode.UNAVAILABLE, "no daemon", None)
    assert failed.nodes == {} and failed.needed is None


@pytest.mark.parametrize(
    "code, kind",
    [
        (grpc.StatusCode.INVALID_ARGUMENT, redlockd.InvalidArgument),
        (grpc.StatusCode.UNAUTHENTICATED, redlockd.Unauthenticated),
        (grpc.StatusCode.PERMISSION_DENIED, redlockd.PermissionDenied),
        (grpc.StatusCode.RESOURCE_EXHAUSTED, redlockd.ResourceExhausted),
        (grpc.StatusCode.FAILED_PRECONDITION, redlockd.FailedPrecondition),
        (grpc.StatusCode.DEADLINE_EXCEEDED, redlockd.DeadlineExceeded),
    ],
)
def test_each_status_code_has_its_error_with_the_daemons_words(code, kind):
    failed = from_status(code, "invalid ttl: 0s is below min_ttl 100ms", None)
    assert type(failed) is kind and failed.code == code
    assert str(failed) == "invalid ttl: 0s is below min_ttl 100ms"


def test_invalid_argument_is_a_value_error_and_an_unknown_code_keeps_its_name():
    assert isinstance(from_status(grpc.StatusCode.INVALID_ARGUMENT, "m", None), ValueError)
    failed = from_status(grpc.StatusCode.OUT_OF_RANGE, "request larger than max_message_size", None)
    assert type(failed) is redlockd.RedlockdError and failed.code == grpc.StatusCode.OUT_OF_RANGE
    assert str(failed) == "OUT_OF_RANGE: request larger than max_message_size"
    assert redlockd.RedlockdError.code is None, "the code was set on the class, for every error"
