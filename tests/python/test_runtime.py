"""The runtime from Python: runtime_info() against `bp-info --json`, load_plugin, devices,
default_device, synchronize, backend counters and bp.Event."""

import json
import os
import pathlib
import subprocess

import pytest

import backplane as bp

# The build tree stages the package in <build>/python/backplane and bp-info in <build>/bin.
BP_INFO = pathlib.Path(bp.__file__).resolve().parents[2] / "bin" / "bp-info"


def without_counter_values(info):
    # Counters change as ops run, and this process has run some that bp-info's has not.
    for plugin in info["plugins"]:
        plugin["counters"] = sorted(plugin["counters"])
    return info


@pytest.mark.skipif(not BP_INFO.exists(), reason="bp-info is not beside the package")
def test_runtime_info_is_bp_info_json():
    printed = subprocess.run(
        [str(BP_INFO), "--json"], check=True, capture_output=True, text=True, env=os.environ
    ).stdout
    expected = without_counter_values(json.loads(printed))
    # bp-info adds what bp::distributed says, which is not the runtime's to report.
    expected.pop("collectives", None)
    got = bp.runtime_info()
    assert json.loads(json.dumps(got)) == got
    assert without_counter_values(got) == expected


def test_runtime_info_shape():
    info = bp.runtime_info()
    assert list(info) == [
        "plugins", "failures", "default_device", "warnings", "validation_findings",
    ]
    cpu = next(plugin for plugin in info["plugins"] if plugin["name"] == "cpu")
    assert set(cpu) == {
        "name", "path", "version", "abi", "devices", "device_note", "ops", "missing_ops",
        "refused_kernels", "counters", "counters_error", "events",
    }
    assert cpu["devices"][0]["device"] == "cpu"
    assert isinstance(cpu["devices"][0]["total_memory"], int)
    assert isinstance(cpu["events"], bool)
    assert "add.out" in cpu["ops"]


def test_devices_and_default_device():
    devices = bp.devices()
    assert devices[0] == bp.device("cpu")
    listed = [d["device"] for p in bp.runtime_info()["plugins"] for d in p["devices"]]
    assert sorted(str(d) for d in devices) == sorted(listed)
    assert str(bp.default_device()) == bp.runtime_info()["default_device"]
    assert bp.zeros(1).device == bp.default_device()


def test_synchronize():
    assert bp.synchronize() is None
    for device in bp.devices():
        bp.synchronize(device)
        bp.synchronize(str(device))
    bp.synchronize(device="cpu")
    with pytest.raises(ValueError):
        bp.synchronize("nodevice")
    with pytest.raises(TypeError):
        bp.synchronize(1.5)


def test_load_plugin():
    info = bp.runtime_info()
    cpu = next(plugin for plugin in info["plugins"] if plugin["name"] == "cpu")
    loaded = bp.load_plugin(cpu["path"])
    assert without_counter_values({"plugins": [loaded]}) == without_counter_values(
        {"plugins": [cpu]}
    )
    assert bp.load_plugin(pathlib.Path(cpu["path"]))["name"] == "cpu"
    with pytest.raises(bp.Error) as failure:
        bp.load_plugin(__file__)
    assert __file__ in str(failure.value) or "shared library" in str(failure.value)
    assert any(f["path"] == __file__ for f in bp.runtime_info()["failures"])
    with pytest.raises(TypeError):
        bp.load_plugin(3)


def test_backend_counters():
    counters = bp._C._backend_counters("cpu")
    assert isinstance(counters, dict)
    info = bp.runtime_info()
    cpu = next(plugin for plugin in info["plugins"] if plugin["name"] == "cpu")
    assert sorted(counters) == sorted(cpu["counters"])
    assert all(isinstance(value, int) for value in counters.values())
    with pytest.raises(bp.Error, match="cpu"):
        bp._C._backend_counters("nobackend")


@pytest.mark.parametrize("device", [str(d) for d in bp.devices()])
def test_event(device):
    start = bp.Event(device)
    end = bp.Event(device=device)
    assert start.device == bp.device(device)
    assert not start.recorded and start.query()
    assert repr(start) == f"<backplane.Event device='{device}' recorded=False>"
    with pytest.raises(bp.Error):
        start.elapsed_time(end)
    start.record()
    x = bp.ones(256, 256, device=device)
    (x @ x).sum()
    end.record()
    end.synchronize()
    assert start.recorded and end.query()
    assert start.elapsed_time(end) >= 0.0
    with pytest.raises(TypeError):
        start.elapsed_time(3)
    assert bp.Event().device == bp.default_device()
    with pytest.raises(ValueError):
        bp.Event("nodevice")
