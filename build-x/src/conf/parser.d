build-x/src/conf/parser.o: src/conf/parser.c src/conf/conf.h \
 src/conf/../core/hayate.h src/conf/../core/types.h \
 src/conf/../core/str.h src/conf/../core/types.h src/conf/../core/mem.h \
 src/conf/../core/hayate.h src/conf/compat.h src/conf/suggest.h \
 src/conf/cycle.h src/conf/lexer.h
src/conf/conf.h:
src/conf/../core/hayate.h:
src/conf/../core/types.h:
src/conf/../core/str.h:
src/conf/../core/types.h:
src/conf/../core/mem.h:
src/conf/../core/hayate.h:
src/conf/compat.h:
src/conf/suggest.h:
src/conf/cycle.h:
src/conf/lexer.h:
