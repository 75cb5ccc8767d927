from ._formats import Format
FORMAT_SPEC = Format(name='openai', key='openai', signature=('zzz_openai',), matches=lambda r: False, parse=lambda r, l: [])
