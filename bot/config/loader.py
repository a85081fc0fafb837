"""Loading the config file: YAML, ${VAR} interpolation, validation, and one clear line for the first problem."""

from __future__ import annotations

import difflib
import os
import re
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from bot.config.agent_configs import check_agent_configs
from bot.config.paths import home_dir
from bot.config.schema import Config
from bot.errors import ConfigError

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def interpolate(value: Any, env: dict[str, str], key: str = "") -> Any:
    """Replace ${VAR} and ${VAR:-default} in every string of a parsed YAML tree."""
    if isinstance(value, dict):
        return {k: interpolate(v, env, f"{key}.{k}" if key else str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env, f"{key}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, str) or "${" not in value:
        return value

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise ConfigError(f"environment variable {name} is not set (write ${{{name}:-}} to allow it to be empty)", key)

    return _ENV_REF.sub(substitute, value)


def load_config(path: Path, env: dict[str, str] | None = None) -> Config:
    """Read, interpolate and validate a config file; raise ConfigError naming the key."""
    import yaml

    if not path.exists():
        raise ConfigError(f"config file {path} not found; run `relaybot init` to create one")
    try:
        # libyaml's loader where PyYAML has it: a tenth of the pure-Python parser's time, on every start.
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"{path}: YAML syntax error{where}: {problem}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys")
    data = interpolate(raw, dict(os.environ) if env is None else env)
    base = path.parent
    for key, default in (("workspace", "workspace"), ("state_dir", "state")):
        given = data.get(key)
        data[key] = base / Path(given).expanduser() if given else home_dir() / default
    for entry in (
        data.get("agents") or []
    ):  # an agent's workspace, like the top-level one, is read from the file's folder
        if isinstance(entry, dict) and entry.get("workspace"):
            entry["workspace"] = base / Path(str(entry["workspace"])).expanduser()
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        raise _first_error(exc, data) from None
    config._source = path.resolve()
    check_agent_configs(config)
    return config


def _first_error(exc: ValidationError, data: dict[str, Any]) -> ConfigError:
    """One clear line for the first problem, naming the key path and what is allowed."""
    error = exc.errors()[0]
    loc = [str(part) for part in error["loc"]]
    key = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error["loc"]).lstrip(".")
    more = exc.error_count() - 1
    suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    if error["type"] == "extra_forbidden":
        model = _model_at(Config, loc[:-1])
        allowed = sorted(model.model_fields) if model else []
        close = difflib.get_close_matches(loc[-1], allowed, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else f"; allowed keys: {', '.join(allowed)}"
        return ConfigError(f"unknown key{hint}{suffix}", key)
    message = error["msg"].removeprefix("Value error, ")
    return ConfigError(f"{message}{suffix}", key)


def _model_at(model: type[BaseModel], loc: list[str]) -> type[BaseModel] | None:
    """The section model found by following a key path from `model`."""
    for part in loc:
        if part.isdigit():
            continue  # an item of the list the previous key named
        field = model.model_fields.get(part)
        annotation = field.annotation if field else None
        if typing.get_origin(annotation) is list:
            annotation = typing.get_args(annotation)[0]
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return None
        model = annotation
    return model
