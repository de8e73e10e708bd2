"""The MCP service's launcher refuses an address it cannot share among its workers, at once."""

from __future__ import annotations

import socket

import pytest

from xmemo import serve


def test_port_zero_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        serve.main(["--port", "0"])
    assert exited.value.code == 2
    assert "--port 0" in capsys.readouterr().err


def test_a_port_another_program_listens_on_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:  # no SO_REUSEPORT: not shareable
        port = taken.getsockname()[1]
        with pytest.raises(SystemExit) as exited:
            serve.main(["--host", "127.0.0.1", "--port", str(port)])
    assert exited.value.code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err


def test_each_worker_binds_a_listener_the_others_can_share() -> None:
    args = serve._parser().parse_args(["--host", "127.0.0.1", "--port", "0"])
    first = serve._listener(args)
    try:
        args.port = first.getsockname()[1]
        first.listen()
        second = serve._listener(args)  # a second worker on the same address
        second.listen()
        assert second.getsockname() == first.getsockname()
        second.close()
    finally:
        first.close()
