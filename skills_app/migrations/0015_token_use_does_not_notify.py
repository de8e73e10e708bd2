"""Recall-cache invalidation (migration 0003) no longer fires when a token is only used.

Authenticating writes the token's ``last_used_at`` at most once a minute per token and process
(``gateway/auth.py``). The statement trigger on ``skills_app_apitoken`` notified every listening
process of that write as of any other, and each flushed its caches of resolutions and verified
tokens: once a minute for every token in use, fleet-wide. Updates now notify per row, and only
when something besides ``last_used_at`` changed (NOTIFY folds repeats within a transaction, so a
bulk update still sends one). Inserts, deletes and truncation notify as before.
"""

from django.db import migrations

from skills_app.migrations._postgresql import run_on_postgresql

TABLE = "skills_app_apitoken"
TRIGGER = "xmemo_recall_notify"

POSTGRES_UP = [
    f"DROP TRIGGER IF EXISTS {TRIGGER} ON {TABLE}",
    f"CREATE TRIGGER {TRIGGER} AFTER INSERT OR DELETE OR TRUNCATE ON {TABLE}"
    " FOR EACH STATEMENT EXECUTE FUNCTION xmemo_notify_recall()",
    f"CREATE TRIGGER {TRIGGER}_update AFTER UPDATE ON {TABLE} FOR EACH ROW"
    " WHEN ((to_jsonb(OLD) - 'last_used_at') IS DISTINCT FROM (to_jsonb(NEW) - 'last_used_at'))"
    " EXECUTE FUNCTION xmemo_notify_recall()",
]
POSTGRES_DOWN = [
    f"DROP TRIGGER IF EXISTS {TRIGGER}_update ON {TABLE}",
    f"DROP TRIGGER IF EXISTS {TRIGGER} ON {TABLE}",
    f"CREATE TRIGGER {TRIGGER} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {TABLE}"
    " FOR EACH STATEMENT EXECUTE FUNCTION xmemo_notify_recall()",
]


class Migration(migrations.Migration):
    dependencies = [("skills_app", "0014_search_vocabulary")]
    operations = [run_on_postgresql(POSTGRES_UP, POSTGRES_DOWN)]
