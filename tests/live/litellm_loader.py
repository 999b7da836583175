"""Load a LiteLLM config with LiteLLM's own proxy loader, in its pinned virtualenv, and say
what LiteLLM then believes of each deployment (``litellm.supports_*``)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from scripts import pinned_venv
from tests.live.conftest import need_venv

# Runs inside LiteLLM's virtualenv: ProxyConfig.load_config is what `litellm --config` runs
# at start-up; it builds the router, which registers each deployment's model_info.
LOADER = """
import asyncio, json, sys
import litellm
from litellm import utils
from litellm.proxy.proxy_server import ProxyConfig

async def main():
    router, _, _ = await ProxyConfig().load_config(router=None, config_file_path=sys.argv[1])
    seen = {}
    for deployment in router.model_list:
        model = deployment["litellm_params"]["model"]
        seen[deployment["model_name"]] = {
            "model": model,
            "supports_function_calling": utils.supports_function_calling(model=model),
            "supports_tool_choice": utils.supports_tool_choice(model=model),
            "supports_parallel_function_calling": utils.supports_parallel_function_calling(
                model=model
            ),
        }
    print(json.dumps(seen))

asyncio.run(main())
"""


def load_in_litellm(config: Path) -> dict[str, Any]:
    """What LiteLLM believes of each deployment of ``config``, by model_name."""
    need_venv(pinned_venv.LITELLM)
    python = pinned_venv.venv_root() / pinned_venv.LITELLM.name / "bin" / "python"
    env = {
        **os.environ,
        # Loopback only: the package's own model cost map, never GitHub's.
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_TELEMETRY": "False",
        "OPENROUTER_API_KEY": "unused-by-the-loader",
    }
    done = subprocess.run(
        [str(python), "-c", LOADER, str(config)],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    loaded: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded
