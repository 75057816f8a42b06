"""Configuration: one TOML file decoded into msgspec structs; every key has a default.

By job: `sections.py` the schema (each key's comment its documentation), `loading.py` a file
read into it, `checks.py` what a value's type cannot say, `example.py` the example file
`sift config example` prints. Callers import every name from here.
"""

from sift.core.config.checks import ZERO_ALLOWED as ZERO_ALLOWED
from sift.core.config.checks import ConfigError as ConfigError
from sift.core.config.checks import _numbers as _numbers
from sift.core.config.checks import check as check
from sift.core.config.checks import check_state_dir as check_state_dir
from sift.core.config.checks import listen_address as listen_address
from sift.core.config.loading import from_dict as from_dict
from sift.core.config.loading import load as load
from sift.core.config.loading import loads as loads
from sift.core.config.sections import BatchConfig as BatchConfig
from sift.core.config.sections import CacheConfig as CacheConfig
from sift.core.config.sections import CallerConfig as CallerConfig
from sift.core.config.sections import CleanConfig as CleanConfig
from sift.core.config.sections import Config as Config
from sift.core.config.sections import DigestConfig as DigestConfig
from sift.core.config.sections import EmbedConfig as EmbedConfig
from sift.core.config.sections import FetchConfig as FetchConfig
from sift.core.config.sections import GatesConfig as GatesConfig
from sift.core.config.sections import GuardConfig as GuardConfig
from sift.core.config.sections import HttpConfig as HttpConfig
from sift.core.config.sections import IdentityConfig as IdentityConfig
from sift.core.config.sections import McpConfig as McpConfig
from sift.core.config.sections import OcrConfig as OcrConfig
from sift.core.config.sections import PdfConfig as PdfConfig
from sift.core.config.sections import RenderConfig as RenderConfig
from sift.core.config.sections import SearchConfig as SearchConfig
from sift.core.config.sections import ServerConfig as ServerConfig
from sift.core.config.sections import StoreConfig as StoreConfig
from sift.core.config.sections import WebhookConfig as WebhookConfig
from sift.core.units import Duration as Duration
from sift.core.units import Size as Size
from sift.core.units import parse_duration as parse_duration
from sift.core.units import parse_size as parse_size
