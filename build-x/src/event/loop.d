build-x/src/event/loop.o: src/event/loop.c src/event/loop.h \
 src/event/../core/hayate.h src/event/../core/types.h \
 src/event/../core/clock.h src/event/../core/mem.h \
 src/event/../core/hayate.h src/event/../core/types.h \
 src/event/../core/buf.h
src/event/loop.h:
src/event/../core/hayate.h:
src/event/../core/types.h:
src/event/../core/clock.h:
src/event/../core/mem.h:
src/event/../core/hayate.h:
src/event/../core/types.h:
src/event/../core/buf.h:
