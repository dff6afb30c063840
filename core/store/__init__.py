"""Run store: SQLAlchemy models, the :class:`Store` repository, schema migrations.

One SQLite database per project at ``<project>/.steadyhand/store.sqlite``, or one PostgreSQL database shared
by a team when ``STEADYHAND_STORE_URL`` names it (:mod:`core.store.shared`);
screenshots are PNG files under ``<project>/.steadyhand/screenshots/<run_id>/``
referenced by rows with paths relative to ``.steadyhand/``.
"""
from . import heal_models  # noqa: F401 - registers the heal_proposals table in the models' metadata
from . import graph_models  # noqa: F401 - registers the state_nodes / state_edges tables in the models' metadata
from .graphs import GraphTable
from . import correction_models  # noqa: F401 - registers the corrections table in the models' metadata
from .corrections import CorrectionConflictError, CorrectionRecord, CorrectionTable
from . import evidence_models  # noqa: F401 - registers the step_evidence table in the models' metadata
from .evidence import StepEvidenceRecord
from . import usage_models  # noqa: F401 - registers the model_usage table
from . import skill_models  # noqa: F401 - registers the skills / skill_uses / failure_records tables
from .skills import FailureRecord, SkillConflictError, SkillTable, SkillUseRecord
from . import resume_models  # noqa: F401 - registers the run_resumes table in the models' metadata
from .heals import HealConflictError, HealProposalRecord, HealTable
from .media import SCREENSHOTS_DIR
from .migrations import SchemaVersionError, current_version, migrate
from .models import SCHEMA_VERSION
from .records import (
    EscalationRecord, ObservationRecord, ResolutionRecord, RunDetail, RunSummary, StepRecord,
    VerdictRecord,
)
from .recovery import INTERRUPTED, recover_interrupted
from .database import StoreDataError, StoreUnavailableError
from .repository import (
    DB_FILENAME, SHORT_RUN_ID, STORE_DIRNAME, RunIdError, Store, StoreClosedError, StoreError, StoreReadOnlyError, StoreVersionError,
    UnknownRunError, short_run_id, store_path,
)
from .shared import STORE_URL_ENV, store_present, store_url, url_label

__all__ = [
    "Store", "store_path", "STORE_DIRNAME", "DB_FILENAME", "SCREENSHOTS_DIR", "SCHEMA_VERSION",
    "migrate", "current_version", "recover_interrupted", "INTERRUPTED",
    "StoreError", "StoreUnavailableError", "StoreDataError", "StoreVersionError", "StoreReadOnlyError", "StoreClosedError", "UnknownRunError", "RunIdError", "SHORT_RUN_ID",
    "short_run_id",
    "SchemaVersionError", "RunSummary", "RunDetail", "StepRecord", "ObservationRecord",
    "ResolutionRecord", "VerdictRecord", "EscalationRecord", "HealTable", "HealProposalRecord",
    "HealConflictError", "GraphTable", "CorrectionTable", "CorrectionRecord", "CorrectionConflictError",
    "StepEvidenceRecord", "SkillTable", "SkillConflictError", "SkillUseRecord", "FailureRecord",
    "STORE_URL_ENV", "store_present", "store_url", "url_label",
]
