"""The outside formats, read and written: import readers and format detection (bytes or a
URL in, ``SkillBundle`` values out), ZIP reading, Source Capsules and workspace backups. No
database: the services read rows into these values and store what they give back."""
