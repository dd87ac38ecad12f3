"""Exceptions: one aotrun.Error subclass per aotrun_status code.

Every error raised for a failed C call carries the status code (``status``)
and the host library's last error message (``message``), which names the
thing that went wrong (the input, the dim, the key, the file, and both
values where two disagree).
"""

OK = 0
ERR_INVALID_ARGUMENT = 1
ERR_NOT_FOUND = 2
ERR_NOT_SUPPORTED = 3
ERR_ACCESS_FAILED = 4
ERR_OUT_OF_MEMORY = 5
ERR_INTERNAL = 6
ERR_VERSION_MISMATCH = 7
ERR_OUTPUT_TOO_SMALL = 8

STATUS_NAMES = {
    OK: "ok",
    ERR_INVALID_ARGUMENT: "invalid argument",
    ERR_NOT_FOUND: "not found",
    ERR_NOT_SUPPORTED: "not supported",
    ERR_ACCESS_FAILED: "access failed",
    ERR_OUT_OF_MEMORY: "out of memory",
    ERR_INTERNAL: "internal error",
    ERR_VERSION_MISMATCH: "ABI version mismatch",
    ERR_OUTPUT_TOO_SMALL: "output buffer too small",
}


class Error(Exception):
    """Base class of every aotrun error. ``status`` is the aotrun_status code
    (an int; ERR_INTERNAL for codes this binding does not know) and
    ``message`` the host's message."""

    status = ERR_INTERNAL

    def __init__(self, message, status=None):
        if status is not None:
            self.status = status
        self.message = message
        super().__init__(message)

    @property
    def status_name(self):
        return STATUS_NAMES.get(self.status, "unknown status")


class InvalidArgumentError(Error, ValueError):
    """AOTRUN_ERR_INVALID_ARGUMENT: bad value, shape, dtype or key."""
    status = ERR_INVALID_ARGUMENT


class NotFoundError(Error, LookupError):
    """AOTRUN_ERR_NOT_FOUND: a named thing (key, option, backend, file,
    method) does not exist."""
    status = ERR_NOT_FOUND


class NotSupportedError(Error):
    """AOTRUN_ERR_NOT_SUPPORTED: a valid request this build cannot do (also:
    a backend that is not available on this machine)."""
    status = ERR_NOT_SUPPORTED


class AccessFailedError(Error, OSError):
    """AOTRUN_ERR_ACCESS_FAILED: file, library, device or data access failed
    (also: the host library cannot be loaded)."""
    status = ERR_ACCESS_FAILED

    def __str__(self):  # OSError's would print the args tuple
        return self.message


class OutOfMemoryError(Error, MemoryError):
    """AOTRUN_ERR_OUT_OF_MEMORY: host or device allocation failed."""
    status = ERR_OUT_OF_MEMORY


class InternalError(Error):
    """AOTRUN_ERR_INTERNAL, and any status code this binding does not know."""
    status = ERR_INTERNAL


class VersionMismatchError(Error):
    """AOTRUN_ERR_VERSION_MISMATCH: ABI major differs, or a table is too
    small."""
    status = ERR_VERSION_MISMATCH


class OutputTooSmallError(InvalidArgumentError):
    """AOTRUN_ERR_OUTPUT_TOO_SMALL (ABI 1.1): an output buffer (an out=
    tensor) cannot hold the result. ``output`` is its index and
    ``needed_shape`` the shape it needs (None when the backend did not
    say). A subclass of InvalidArgumentError, which a 1.0 backend raises
    for the same mistake."""
    status = ERR_OUTPUT_TOO_SMALL
    output = None
    needed_shape = None


class ClosedError(Error, ValueError):
    """The program or method was closed (like I/O on a closed file)."""
    status = ERR_INVALID_ARGUMENT


_BY_STATUS = {
    ERR_INVALID_ARGUMENT: InvalidArgumentError,
    ERR_NOT_FOUND: NotFoundError,
    ERR_NOT_SUPPORTED: NotSupportedError,
    ERR_ACCESS_FAILED: AccessFailedError,
    ERR_OUT_OF_MEMORY: OutOfMemoryError,
    ERR_INTERNAL: InternalError,
    ERR_VERSION_MISMATCH: VersionMismatchError,
    ERR_OUTPUT_TOO_SMALL: OutputTooSmallError,
}


def error_for(status, message):
    """The exception for a failed call: the subclass of its status code
    (InternalError for unknown codes, which keeps the raw code)."""
    cls = _BY_STATUS.get(status, InternalError)
    return cls(message or "(no message)", status)
