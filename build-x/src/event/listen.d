build-x/src/event/listen.o: src/event/listen.c src/event/listen.h \
 src/event/loop.h src/event/../core/hayate.h src/event/../core/types.h \
 src/event/../core/log.h src/event/../core/hayate.h \
 src/event/../core/types.h src/event/../core/clock.h \
 src/event/../core/str.h
src/event/listen.h:
src/event/loop.h:
src/event/../core/hayate.h:
src/event/../core/types.h:
src/event/../core/log.h:
src/event/../core/hayate.h:
src/event/../core/types.h:
src/event/../core/clock.h:
src/event/../core/str.h:
