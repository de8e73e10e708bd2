"""Level 0's per-workspace vocabulary (migration 0014), counted again from every skill's
``search_vector``: after migration 0031 changed what the vectors hold, and after a bulk load
(``bench.seed``) that kept the row trigger off. PostgreSQL only."""

VOCABULARY = [
    "TRUNCATE skills_app_searchterm",
    """
    INSERT INTO skills_app_searchterm (workspace_id, lexeme, df)
    SELECT s.workspace_id, v.lexeme, count(*)
      FROM skills_app_skill s, unnest(s.search_vector) v
     WHERE s.status = 'active' AND s.current_revision_id IS NOT NULL
     GROUP BY 1, 2
    UNION ALL
    SELECT s.workspace_id, '', count(*) FROM skills_app_skill s
     WHERE s.status = 'active' AND s.current_revision_id IS NOT NULL
     GROUP BY 1
    """,
]
