"""Output files appear complete or not at all: written under a temporary name in the same
directory, given the permissions a new file gets (umask), then renamed into place."""

import os
import tempfile


def write_via_temp(path, write):
    """Calls write(tmp_path), then renames tmp_path to path; on any error removes it."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp.", suffix=os.path.splitext(path)[1], dir=d)
    os.close(fd)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
